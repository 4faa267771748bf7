"""A watch session: the project watchers, the prediction engine and the saved activity
state, working together. `engram watch` runs one headless; the tray runs one beside its
window. The composition root builds it from the settings (`Engram.watch_session`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.activity import file_signal, locate, save_state
from app.watchers import ProjectWatcher
from services.activity.prediction import Prediction, PredictiveEngine
from services.activity.signals import Signal, SignalKind
from services.activity.watch_batch import Burst, RawKind
from services.activity.watch_rules import PathRules

if TYPE_CHECKING:
    from app.composition import Engram

log = logging.getLogger(__name__)


class WatchSession:
    def __init__(
        self,
        engram: Engram,
        engine: PredictiveEngine,
        roots: list[Path],
        report: Callable[[dict[str, Any]], None],
        rules: PathRules,
        *,
        debounce_ms: int,
        storm_files: int,
        notice: Callable[[str], None] | None = None,
        observer_factory: Callable[[], Any] | None = None,
        polling_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.engram = engram
        self.engine = engine
        self.report = report
        self.patterns = rules.secret_patterns
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.watcher = ProjectWatcher(
            roots,
            rules,
            self._on_burst,
            debounce_ms,
            storm_files,
            observer_factory=observer_factory,
            polling_factory=polling_factory,
            on_notice=notice,
        )
        self.last_prediction: Prediction | None = None

    def start(self) -> None:
        self.watcher.start()
        now = datetime.now(UTC)
        for repo in {r.root for r in list(self.watcher.repositories.values())}:
            head = self.watcher.head_of(repo)
            if head is not None and head.branch:
                with self.lock:
                    self.engine.observe(
                        Signal(SignalKind.BRANCH_CHECKOUT, now, repo.name, branch=head.branch)
                    )

    def request_stop(self) -> None:
        self.stopped.set()

    def stop(self) -> None:
        self.stopped.set()
        self.watcher.stop()

    def _on_burst(self, burst: Burst, watcher: ProjectWatcher) -> None:
        now = datetime.now(UTC)
        for head_event in burst.heads:
            head = watcher.head_of(head_event.path)
            branch = head.branch if head else None
            label = head.label if head else "?"
            signal = Signal(SignalKind.BRANCH_CHECKOUT, now, head_event.path.name, branch=branch)
            self._predict(signal, {"branch": label}, head_event.path)
        if burst.storm_files:
            self.report(
                {
                    "t": now.isoformat(timespec="seconds"),
                    "storm": burst.storm_files,
                    "root": ", ".join(str(root) for root in watcher.roots),
                }
            )
            return
        if burst.file is not None:
            kind = (
                SignalKind.FILE_SAVED
                if burst.file.kind is RawKind.SAVED
                else SignalKind.FILE_OPENED
            )
            watcher.reading(burst.file.path)
            signal = file_signal(
                kind, burst.file.path, self.patterns, at=now, reading=watcher.reading
            )
            self._predict(signal, {"path": signal.path}, locate(burst.file.path).root)

    def _predict(self, signal: Signal, what: dict[str, Any], root: Path) -> None:
        with self.lock:
            prediction = self.engine.observe(signal)
            self.last_prediction = prediction
            try:
                save_state(self.engram, self.engine, root)
            except Exception:  # a locked database must not stop the watcher
                log.warning("could not save the activity state", exc_info=True)
        self.report(prediction_line(prediction, signal.kind.value, what))


def prediction_line(prediction: Prediction, event: str, what: dict[str, Any]) -> dict[str, Any]:
    """One log line of the watcher: what happened and what it put in tiers 1 and 2."""
    ids = prediction.tier_ids()
    return {
        "t": datetime.now(UTC).isoformat(timespec="seconds"),
        "event": event,
        "project": prediction.project,
        **what,
        "activity": prediction.activity.value,
        "tier1": ids[1],
        "tier2": ids[2],
        "titles": {
            c.memory.id: c.memory.title for c in [*prediction.critical, *prediction.relevant]
        },
        "ms": round(prediction.elapsed_ms, 1),
    }
