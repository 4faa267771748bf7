"""Recording the words of searches: salted hashes counted per UTC day and project,
batched with the search metrics, pruned with them, and never the plain words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from services.filters import MemoryFilter
from services.storage.metrics import SEARCHES_TERM, SearchMetrics, SearchMetricsLog
from services.storage.query_terms import hash_term, stored_term_salt, term_salt

# A word no memory holds, so finding it in the files could only mean the query was kept.
ODD_WORD = "zanzibarquux"


def term_rows(engram: Any) -> dict[tuple[str, str], int]:
    rows = engram.store.database.execute_sql("SELECT project, term, count FROM query_term")
    return {(project, term): count for project, term, count in rows}


def test_searches_record_hashed_words_per_day_and_project(engram: Any, data_dir: Path) -> None:
    engram.service.add({"content": "The refund worker retries failed payments."}, "shop")
    shop = MemoryFilter(project="shop")
    engram.service.search(f"Refunds {ODD_WORD} retrying", shop)
    engram.service.search("refund payments", shop)
    engram.service.search("refund", MemoryFilter())  # all projects: project ''
    assert term_rows(engram) == {}  # buffered off the search path
    engram.metrics.flush()
    rows = term_rows(engram)
    salt = stored_term_salt()
    assert salt is not None

    def count(project: str, term: str) -> int | None:
        return rows.get((project, hash_term(salt, term)))

    assert rows[("shop", SEARCHES_TERM)] == 2 and rows[("", SEARCHES_TERM)] == 1
    assert count("shop", "refund") == 2 and count("", "refund") == 1
    assert count("shop", "retri") == 1 and count("shop", "payment") == 1
    assert count("shop", "zanzibarquux") == 1
    assert all(len(term) == 16 for _, term in rows if term != SEARCHES_TERM)
    days = [r[0] for r in engram.store.database.execute_sql("SELECT DISTINCT day FROM query_term")]
    assert days == [datetime.now(UTC).date().isoformat()]
    # a later batch adds to the same rows
    engram.service.search("refund", shop)
    engram.metrics.flush()
    assert count("shop", "refund") == 2
    assert term_rows(engram)[("shop", hash_term(salt, "refund"))] == 3

    engram.store.database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    files = [path.read_bytes() for path in data_dir.rglob("*") if path.is_file()]
    assert any(b"refund worker" in data for data in files)  # the scan sees stored text
    for data in files:
        assert ODD_WORD.encode() not in data
        assert ODD_WORD.encode("utf-16-le") not in data


def test_terms_are_written_with_the_metrics_batch(engram: Any) -> None:
    log = SearchMetricsLog(batch_size=2)
    log.record(SearchMetrics("hybrid", "standard", 6), "refund", "shop")
    assert term_rows(engram) == {}
    log.record(SearchMetrics("hybrid", "standard", 6), "refund", "shop")
    assert term_rows(engram)[("shop", hash_term(term_salt(), "refund"))] == 2
    log.record(SearchMetrics("hybrid", "standard", 6))  # no query: metrics only
    log.flush()
    assert term_rows(engram)[("shop", SEARCHES_TERM)] == 2


def test_query_terms_older_than_the_retention_are_pruned(engram: Any) -> None:
    today = datetime.now(UTC).date()
    for age in (45, 31, 29, 0):
        engram.store.database.execute_sql(
            "INSERT INTO query_term (day, project, term, count) VALUES (?, 'shop', 'abc', 1)",
            [(today - timedelta(days=age)).isoformat()],
        )
    log = SearchMetricsLog(retention_days=30)
    log.record(SearchMetrics("lexical", "standard", 6), "refund", "shop")
    log.flush()
    days = {
        (today - datetime.fromisoformat(day).date()).days
        for (day,) in engram.store.database.execute_sql("SELECT day FROM query_term")
    }
    assert days == {0, 29}
