"""Search metrics: what every search found per source, how long each stage took, its
top similarity and fallback flags; kept for a retention period and summarised by
`engram stats`.

No query text is stored: only its length, and the salted hashes of its words
(`services.storage.query_terms`), counted per UTC day and project in `query_term` (project ''
for a search of all projects) so the staleness scan can tell which memories recent
searches never come near. A day's row for the reserved term `*` counts the searches.
Both are kept for the same retention period."""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee as pw

from services.storage.database import SearchMetricRow
from services.storage.query_terms import hash_term, query_terms, term_salt

log = logging.getLogger(__name__)

SEARCHES_TERM = "*"  # the row counting a day's searches (a hash is never "*")


@dataclass
class SearchMetrics:
    retriever: str
    mode: str
    query_chars: int
    dense_count: int = 0
    lexical_count: int = 0
    identifier_count: int = 0
    result_count: int = 0
    embed_ms: float = 0.0
    dense_ms: float = 0.0
    lexical_ms: float = 0.0
    merge_ms: float = 0.0
    total_ms: float = 0.0
    top_similarity: float | None = None
    flags: list[str] = field(default_factory=list)


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class SearchMetricsLog:
    """Writes search metrics in small batches (one transaction per `batch_size`
    searches, and at `flush`), so recording stays off the search's critical path."""

    def __init__(self, retention_days: int = 30, batch_size: int = 25) -> None:
        self.retention_days = retention_days
        self.batch_size = batch_size
        self._pruned = False
        self._pending: list[dict[str, Any]] = []
        # (day, project, term) → searches: plain words, in memory until the next flush.
        self._terms: dict[tuple[str, str, str], int] = {}

    def record(
        self, metrics: SearchMetrics, query: str | None = None, project: str | None = None
    ) -> None:
        """Buffer one search's metrics and, when `query` is given, its words for the
        (UTC day, `project`) it searched."""
        now = datetime.now(UTC)
        values = dict(metrics.__dict__)
        values["flags"] = json.dumps(metrics.flags)
        values["at"] = now.isoformat(timespec="milliseconds")
        self._pending.append(values)
        if query is not None:
            day = now.date().isoformat()
            bucket = project or ""
            for term in (SEARCHES_TERM, *query_terms(query)):
                key = (day, bucket, term)
                self._terms[key] = self._terms.get(key, 0) + 1
        if len(self._pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Store the buffered metrics; a database that cannot be written (locked by
        another process) loses them with a warning rather than failing a search."""
        pending, self._pending = self._pending, []
        terms, self._terms = self._terms, {}
        try:
            database = SearchMetricRow._meta.database
            with database.atomic():
                if not self._pruned:
                    cutoff = datetime.now(UTC) - timedelta(days=self.retention_days)
                    old = SearchMetricRow.at < cutoff.isoformat()
                    SearchMetricRow.delete().where(old).execute()
                    first_day = cutoff.date().isoformat()
                    database.execute_sql("DELETE FROM query_term WHERE day < ?", [first_day])
                    self._pruned = True
                if pending:
                    SearchMetricRow.insert_many(pending).execute()
                if terms:
                    self._store_terms(database, terms)
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:
            log.warning("%d search metrics not recorded: %s", len(pending), error)

    @staticmethod
    def _store_terms(database: Any, terms: dict[tuple[str, str, str], int]) -> None:
        salt = term_salt()
        rows = [
            (day, project, term if term == SEARCHES_TERM else hash_term(salt, term), count)
            for (day, project, term), count in terms.items()
        ]
        database.connection().executemany(
            "INSERT INTO query_term (day, project, term, count) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (day, project, term) DO UPDATE SET count = count + excluded.count",
            rows,
        )

    def summary(self, days: int | None = None) -> dict[str, Any]:
        self.flush()
        days = days or self.retention_days
        since = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        rows = list(SearchMetricRow.select().where(SearchMetricRow.at >= since))
        totals = [r.total_ms for r in rows]
        flags: dict[str, int] = {}
        for row in rows:
            for flag in json.loads(row.flags):
                flags[flag] = flags.get(flag, 0) + 1
        by_retriever: dict[str, int] = {}
        for row in rows:
            by_retriever[row.retriever] = by_retriever.get(row.retriever, 0) + 1

        def mean(name: str) -> float:
            return sum(getattr(r, name) for r in rows) / len(rows) if rows else 0.0

        similarities = [r.top_similarity for r in rows if r.top_similarity is not None]
        return {
            "days": days,
            "searches": len(rows),
            "by_retriever": by_retriever,
            "latency_ms": {
                "p50": _percentile(totals, 0.5),
                "p95": _percentile(totals, 0.95),
                "embed_mean": mean("embed_ms"),
                "dense_mean": mean("dense_ms"),
                "lexical_mean": mean("lexical_ms"),
                "merge_mean": mean("merge_ms"),
            },
            "results_mean": {
                "dense": mean("dense_count"),
                "lexical": mean("lexical_count"),
                "identifier": mean("identifier_count"),
                "returned": mean("result_count"),
            },
            "top_similarity_mean": (
                sum(similarities) / len(similarities) if similarities else None
            ),
            "empty_searches": sum(1 for r in rows if r.result_count == 0),
            "flags": flags,
        }
