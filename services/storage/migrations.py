"""Named, recorded, idempotent schema migrations for the SQLite store.

Each migration is a name and a list of SQL statements. Applied names are recorded in
`schema_migrations`; running the list again applies only what is missing, so a fresh
install and an upgraded one end with the same schema. Never edit a migration that has
shipped: add a new one. A migration never calls live domain code, which changes: one
that needs code gets a frozen copy of it (0008's lesson parser, `lesson_backfill_0008`).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from services.storage.lesson_backfill_0008 import backfill_lessons


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[sqlite3.Connection], None]


def _script(*statements: str) -> Callable[[sqlite3.Connection], None]:
    def run(connection: sqlite3.Connection) -> None:
        for statement in statements:
            connection.execute(statement)

    return run


_INITIAL = _script(
    """
    CREATE TABLE memory (
        id TEXT PRIMARY KEY,
        project TEXT,
        type TEXT NOT NULL,
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        summary TEXT,
        compressed TEXT,
        index_line TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        file_refs TEXT NOT NULL DEFAULT '[]',
        confidence REAL NOT NULL DEFAULT 0.5,
        source TEXT NOT NULL DEFAULT 'explicit',
        session_id TEXT,
        task_id TEXT,
        role TEXT,
        branch TEXT,
        scope TEXT NOT NULL DEFAULT 'project-shared',
        created_at TEXT NOT NULL,
        created_ts REAL NOT NULL,
        updated_at TEXT NOT NULL,
        valid_from TEXT,
        valid_to TEXT,
        last_accessed TEXT,
        retrieval_count INTEGER NOT NULL DEFAULT 0,
        citation_count INTEGER NOT NULL DEFAULT 0,
        ignore_count INTEGER NOT NULL DEFAULT 0,
        use_count INTEGER NOT NULL DEFAULT 0,
        supersedes TEXT,
        superseded_by TEXT,
        tier TEXT NOT NULL DEFAULT 'warm',
        embedded_model TEXT,
        staged_model TEXT
    )
    """,
    "CREATE INDEX memory_project ON memory (project)",
    "CREATE INDEX memory_created ON memory (created_ts)",
    "CREATE INDEX memory_tier ON memory (tier)",
    "CREATE INDEX memory_embedded ON memory (embedded_model)",
    """
    CREATE TABLE chunk (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id TEXT NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        language TEXT,
        text TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        UNIQUE (memory_id, idx)
    )
    """,
    """
    CREATE TABLE usage_event (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id TEXT NOT NULL,
        event TEXT NOT NULL,
        session_id TEXT,
        at TEXT NOT NULL
    )
    """,
    "CREATE INDEX usage_event_memory ON usage_event (memory_id)",
    """
    CREATE TABLE search_metric (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        retriever TEXT NOT NULL,
        mode TEXT NOT NULL,
        query_chars INTEGER NOT NULL,
        dense_count INTEGER NOT NULL,
        lexical_count INTEGER NOT NULL,
        identifier_count INTEGER NOT NULL,
        result_count INTEGER NOT NULL,
        embed_ms REAL NOT NULL,
        dense_ms REAL NOT NULL,
        lexical_ms REAL NOT NULL,
        merge_ms REAL NOT NULL,
        total_ms REAL NOT NULL,
        top_similarity REAL,
        flags TEXT NOT NULL DEFAULT '[]'
    )
    """,
    "CREATE INDEX search_metric_at ON search_metric (at)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

_FTS = _script(
    """
    CREATE VIRTUAL TABLE memory_fts USING fts5(
        title, content, tags, refs,
        memory_id UNINDEXED, chunk_idx UNINDEXED,
        tokenize = 'porter unicode61'
    )
    """,
)

# The lexical index as it is now; `MemoryStore.rebuild_fts` creates the same table.
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5("
    "title, content, tags, refs, project, memory_id UNINDEXED, chunk_idx UNINDEXED, "
    "tokenize = 'porter unicode61')"
)


def project_token(project: str | None) -> str:
    """One FTS token standing for a project, so a search filters by project inside
    FTS5 (a column filter) instead of joining the memory table, ~3x faster at 10k."""
    if project is None:
        return "zqnone"
    return "zq" + hashlib.sha1(project.encode("utf-8")).hexdigest()[:12]


def _fts_with_project(connection: sqlite3.Connection) -> None:
    connection.create_function("engram_project_token", 1, project_token, deterministic=True)
    connection.execute("DROP TABLE IF EXISTS memory_fts")
    connection.execute(FTS_TABLE_SQL)
    joined = "(SELECT group_concat(value, ' ') FROM json_each(m.{}))"
    connection.execute(
        "INSERT INTO memory_fts (title, content, tags, refs, project, memory_id, chunk_idx) "
        f"SELECT m.title, m.content, {joined.format('tags')}, {joined.format('file_refs')}, "
        "engram_project_token(m.project), m.id, -1 FROM memory m"
    )
    connection.execute(
        "INSERT INTO memory_fts (title, content, tags, refs, project, memory_id, chunk_idx) "
        "SELECT m.title, c.text, '', '', engram_project_token(m.project), m.id, c.idx "
        "FROM chunk c JOIN memory m ON m.id = c.memory_id"
    )


# Prediction: what users cited after a signal (learning), and branch lookups.
_SIGNAL_AFFINITY = _script(
    """
    CREATE TABLE signal_affinity (
        signal TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (signal, memory_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX memory_branch ON memory (branch) WHERE branch IS NOT NULL",
)


# The REM cycle: proposals waiting for the user, what ran when, links between memories.
_REM = _script(
    """
    CREATE TABLE finding (
        id TEXT PRIMARY KEY,
        op TEXT NOT NULL,
        kind TEXT NOT NULL,
        summary TEXT NOT NULL,
        memory_ids TEXT NOT NULL,
        options TEXT NOT NULL,
        recommended TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'pending',
        answer TEXT,
        created_at TEXT NOT NULL,
        answered_at TEXT
    )
    """,
    "CREATE INDEX finding_status ON finding (status, created_at)",
    """
    CREATE TABLE rem_run (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT NOT NULL,
        started_at TEXT NOT NULL,
        seconds REAL,
        findings INTEGER,
        status TEXT NOT NULL,
        note TEXT
    )
    """,
    """
    CREATE TABLE memory_link (
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        kind TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (source, target, kind)
    ) WITHOUT ROWID
    """,
)


# Communities of the link graph with their summaries, the words recent searches used
# (salted hashes, never the query) for the staleness scan, and each run's result.
_REM_GRAPH = _script(
    """
    CREATE TABLE community (
        id TEXT PRIMARY KEY,
        project TEXT,
        members TEXT NOT NULL,
        size INTEGER NOT NULL,
        label TEXT NOT NULL,
        summary TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE query_term (
        day TEXT NOT NULL,
        project TEXT NOT NULL DEFAULT '',
        term TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (day, project, term)
    ) WITHOUT ROWID
    """,
    "ALTER TABLE rem_run ADD COLUMN result TEXT",
    "CREATE INDEX memory_link_target ON memory_link (target)",
)


# What holds now (issue 6): relative dates resolved at write time, contradiction
# candidates and verdicts, structured facts, project context with its history, lessons
# with their versions.
_WHAT_HOLDS = _script(
    """
    CREATE TABLE memory_time (
        memory_id TEXT NOT NULL,
        start INTEGER NOT NULL,
        phrase TEXT NOT NULL,
        resolved TEXT NOT NULL,
        resolved_end TEXT,
        granularity TEXT NOT NULL,
        PRIMARY KEY (memory_id, start)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX memory_time_resolved ON memory_time (resolved)",
    """
    CREATE TABLE contradiction_candidate (
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        cues TEXT NOT NULL DEFAULT '[]',
        similarity REAL,
        queued_at TEXT NOT NULL,
        judged_at TEXT,
        PRIMARY KEY (a, b)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE contradiction (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        kind TEXT NOT NULL,
        holder TEXT,
        detected_at TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '{}',
        resolved_at TEXT,
        resolution TEXT,
        note TEXT,
        UNIQUE (a, b)
    )
    """,
    "CREATE INDEX contradiction_open ON contradiction (resolved_at)",
    """
    CREATE TABLE fact (
        memory_id TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        scope TEXT NOT NULL DEFAULT '',
        confidence REAL NOT NULL DEFAULT 0.5,
        extracted_by TEXT NOT NULL
    )
    """,
    "CREATE INDEX fact_key ON fact (key, scope)",
    """
    CREATE TABLE project_context (
        project TEXT PRIMARY KEY,
        notes TEXT NOT NULL DEFAULT '',
        active_files TEXT NOT NULL DEFAULT '[]',
        todos TEXT NOT NULL DEFAULT '[]',
        decisions TEXT NOT NULL DEFAULT '[]',
        catalogue TEXT NOT NULL DEFAULT '{}',
        updated_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE context_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        saved_at TEXT NOT NULL,
        catalogue_sha256 TEXT NOT NULL,
        catalogue_delta TEXT NOT NULL,
        notes TEXT NOT NULL,
        active_files TEXT NOT NULL,
        todos TEXT NOT NULL,
        decisions TEXT NOT NULL
    )
    """,
    "CREATE INDEX context_history_project ON context_history (project, saved_at)",
    """
    CREATE TABLE lesson (
        memory_id TEXT PRIMARY KEY,
        trigger_text TEXT NOT NULL,
        action TEXT NOT NULL,
        rationale TEXT NOT NULL DEFAULT '',
        version INTEGER NOT NULL DEFAULT 1
    )
    """,
    """
    CREATE TABLE lesson_version (
        memory_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        trigger_text TEXT NOT NULL,
        action TEXT NOT NULL,
        rationale TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        reason TEXT,
        session_id TEXT,
        saved_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, version)
    ) WITHOUT ROWID
    """,
)


# Assistant sessions (issue 16): each session a hook has seen, with how far its
# transcript was read and when it was given its context block, and the memories already
# given to it, so none is given twice.
_ASSISTANT_SESSIONS = _script(
    """
    CREATE TABLE assistant_session (
        session_id TEXT PRIMARY KEY,
        assistant TEXT NOT NULL,
        project TEXT,
        cwd TEXT,
        transcript_path TEXT,
        transcript_offset INTEGER NOT NULL DEFAULT 0,
        context_at TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX assistant_session_updated ON assistant_session (updated_at)",
    """
    CREATE TABLE session_injection (
        session_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        event TEXT NOT NULL,
        injected_at TEXT NOT NULL,
        PRIMARY KEY (session_id, memory_id)
    ) WITHOUT ROWID
    """,
)


def _lesson_backfill(connection: sqlite3.Connection) -> None:
    """Every lesson memory gets its structured `lesson` row and version records (a frozen
    copy of the backfill as it shipped, `lesson_backfill_0008`; `engram lesson backfill`
    runs the live one for lessons imported later). A partial index finds lesson memories
    without scanning every memory (the backfill's and the lesson commands' lookup)."""
    connection.execute("CREATE INDEX memory_lesson ON memory (id) WHERE type = 'lesson'")
    backfill_lessons(connection)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_initial", _INITIAL),
    Migration("0002_fts5_index", _FTS),
    Migration("0003_fts_project_column", _fts_with_project),
    Migration("0004_signal_affinity", _SIGNAL_AFFINITY),
    Migration("0005_rem", _REM),
    Migration("0006_rem_graph", _REM_GRAPH),
    Migration("0007_what_holds", _WHAT_HOLDS),
    Migration("0008_lesson_backfill", _lesson_backfill),
    Migration("0009_assistant_sessions", _ASSISTANT_SESSIONS),
)


def applied_migrations(connection: sqlite3.Connection) -> list[str]:
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    rows = connection.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    return [str(row[0]) for row in rows]


def pending_migrations(
    connection: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS
) -> list[str]:
    """The names not yet applied, read without writing (a read-only database too)."""
    known = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    done: set[str] = set()
    if known:
        done = {str(row[0]) for row in connection.execute("SELECT name FROM schema_migrations")}
    return [m.name for m in migrations if m.name not in done]


def migrate(
    connection: sqlite3.Connection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    before: Callable[[list[str]], None] | None = None,
) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; `before`
    is called with the pending names first, only when there are some (the automatic
    backup before an upgrade).

    Returns the names applied now (empty when the schema was already current).
    """
    done = set(applied_migrations(connection))
    pending = [m for m in migrations if m.name not in done]
    if pending and before is not None:
        before([m.name for m in pending])
    applied: list[str] = []
    for migration in pending:
        connection.execute("BEGIN")
        try:
            migration.apply(connection)
            connection.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, datetime.now(UTC).isoformat()),
            )
            connection.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (a full disk): the first error counts.
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied


def schema_sql(connection: sqlite3.Connection) -> list[tuple[str, str]]:
    """The schema as (name, sql) pairs, for comparing a fresh and an upgraded database."""
    rows = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
    ).fetchall()
    return [(str(name), " ".join(str(sql).split())) for name, sql in rows]
