"""Versioned, forward-only SQLite migrations, applied at start-up in one write transaction.

Version 0 is the seed's legacy layout: `topics` without `relevance_locked`, `relations`
that may use the old `executes` type (role executes process), and `quiz_banks` whose
questions carry no difficulty. Migration 1 creates whatever is missing with
`CREATE ... IF NOT EXISTS`, so a fresh file and a legacy file follow the same path.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from shared.errors import StoreError
from shared.store._common import normalise_question_key, utcnow
from shared.store.migration_order import must_apply
from shared.store.sqlite.audit import audit_table
from shared.store.sqlite.db import dumps, to_text
from shared.store.sqlite.migrate_records import move_records
from shared.store.sqlite.migrate_state import move_settings, provenance_tables, state_tables
from shared.store.sqlite.pending import pending_tables
from shared.store.sqlite.tombstones import tombstone_table
from shared.store.sqlite.turns import turns_kb_miss
from shared.store.sqlite_file import current_version, newer_schema

_BASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS topics (
    id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    learning_relevance TEXT NOT NULL DEFAULT 'standard',
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT,
    updated_at TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS topics_type ON topics (type);
CREATE TABLE IF NOT EXISTS relations (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT,
    PRIMARY KEY (source, target, type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_target ON relations (target);
CREATE TABLE IF NOT EXISTS quiz_banks (
    topic_id TEXT PRIMARY KEY,
    questions TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS sources (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    chunks_done INTEGER NOT NULL DEFAULT 0,
    chunks_total INTEGER,
    who TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sources_sha256 ON sources (sha256);
CREATE INDEX IF NOT EXISTS sources_status ON sources (status);
CREATE TABLE IF NOT EXISTS source_chunks (
    source_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    merged_at TEXT NOT NULL,
    PRIMARY KEY (source_id, chunk_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS source_texts (
    source_id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS content (
    topic_id TEXT PRIMARY KEY,
    article TEXT,
    slides TEXT,
    infographic TEXT,
    prompt_version TEXT,
    stale INTEGER NOT NULL DEFAULT 0,
    generated_at TEXT,
    topic_fingerprint TEXT
);
CREATE TABLE IF NOT EXISTS quiz_attempts (
    id TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    week TEXT NOT NULL,
    topic_id TEXT,
    question_keys TEXT NOT NULL,
    status TEXT NOT NULL,
    idle_timeout_s REAL NOT NULL,
    started_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS quiz_attempts_user ON quiz_attempts (user, started_at);
CREATE UNIQUE INDEX IF NOT EXISTS quiz_attempts_one_active
    ON quiz_attempts (user) WHERE status = 'active';
CREATE TABLE IF NOT EXISTS attempt_answers (
    attempt_id TEXT NOT NULL,
    question_index INTEGER NOT NULL,
    choice INTEGER NOT NULL,
    correct INTEGER NOT NULL,
    points INTEGER NOT NULL,
    answered_at TEXT NOT NULL,
    PRIMARY KEY (attempt_id, question_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scores (
    user TEXT NOT NULL,
    week TEXT NOT NULL,
    points INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (user, week)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS scores_week ON scores (week, points);
CREATE TABLE IF NOT EXISTS thread_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS thread_messages_user ON thread_messages (user, id);
CREATE TABLE IF NOT EXISTS suggestions (
    id TEXT PRIMARY KEY,
    delta TEXT NOT NULL,
    proposed_by TEXT NOT NULL,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    context TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS suggestions_status ON suggestions (status, created_at);
CREATE TABLE IF NOT EXISTS llm_calls (
    id TEXT PRIMARY KEY,
    occurred_at TEXT NOT NULL,
    task TEXT NOT NULL,
    model TEXT NOT NULL,
    tier TEXT NOT NULL,
    provider TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_creation_input_tokens INTEGER NOT NULL,
    cache_read_input_tokens INTEGER NOT NULL,
    stop_reason TEXT,
    ok INTEGER NOT NULL,
    error_msg TEXT,
    cost_usd REAL NOT NULL,
    request_id TEXT
);
CREATE INDEX IF NOT EXISTS llm_calls_occurred ON llm_calls (occurred_at);
CREATE TABLE IF NOT EXISTS handbook_sync_state (
    path TEXT PRIMARY KEY,
    sha TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS curriculum (
    week TEXT PRIMARY KEY,
    topic_id TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""


def _base_schema(conn: sqlite3.Connection) -> None:
    # executescript() would COMMIT our transaction; run the statements one by one instead.
    for statement in _BASE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _relevance_locked(conn: sqlite3.Connection) -> None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(topics)")}
    if "relevance_locked" not in columns:
        conn.execute("ALTER TABLE topics ADD COLUMN relevance_locked INTEGER NOT NULL DEFAULT 0")


def _relation_vocabulary(conn: sqlite3.Connection) -> None:
    # `role executes process` became `process executed_by role`; an existing swapped
    # relation wins (INSERT OR IGNORE), so the migration also deduplicates.
    conn.execute(
        "INSERT OR IGNORE INTO relations (source, target, type, description) "
        "SELECT target, source, 'executed_by', description FROM relations "
        "WHERE type = 'executes' AND source <> target"
    )
    conn.execute("DELETE FROM relations WHERE type = 'executes'")


def _question_difficulty(conn: sqlite3.Connection) -> None:
    rows = conn.execute("SELECT topic_id, questions FROM quiz_banks").fetchall()
    for topic_id, raw in rows:
        questions = json.loads(raw or "[]")
        changed = False
        for question in questions:
            if not question.get("difficulty"):
                question["difficulty"] = "medium"
                changed = True
            if not question.get("key"):
                question["key"] = normalise_question_key(question.get("text", ""))
                changed = True
        if changed:
            conn.execute(
                "UPDATE quiz_banks SET questions = ?, updated_at = ? WHERE topic_id = ?",
                (dumps(questions), to_text(utcnow()), topic_id),
            )


@dataclass(frozen=True)
class Migration:
    """One forward-only schema step."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "base schema (legacy v0 tables plus every collection)", _base_schema),
    Migration(2, "topics.relevance_locked, default false", _relevance_locked),
    Migration(
        3, "relation type executes -> executed_by (swapped, deduplicated)", _relation_vocabulary
    ),
    Migration(4, "quiz questions without difficulty become medium", _question_difficulty),
    Migration(
        5,
        "proposals, feedback, upload messages, merge progress, idempotency keys, "
        "custom topics, flags and locks",
        state_tables,
    ),
    Migration(6, "settings rows move into their own tables", move_settings),
    Migration(7, "assertions, topic curation, change log; topics by updated_at", provenance_tables),
    Migration(8, "chat turns table; settings turn rows move into it", move_settings),
    Migration(
        9,
        "held changes, handbook trees, kb version, current sources, conversation refs; "
        "the last settings rows move into them and settings is dropped",
        move_records,
    ),
    Migration(10, "audit trail of admin actions", audit_table),
    Migration(12, "held chunk results and pending relations", pending_tables),
    Migration(13, "tombstones of topics an admin deleted", tombstone_table),
    Migration(15, "turns.kb_miss (earlier turns: from R42's fixed wording)", turns_kb_miss),
)
LATEST_VERSION = MIGRATIONS[-1].version


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply pending migrations inside the caller's write transaction; returns versions applied."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    version = current_version(conn)
    if version > LATEST_VERSION:
        raise StoreError(newer_schema(version, LATEST_VERSION))
    recorded = {int(r[0]) for r in conn.execute("SELECT version FROM schema_version")}
    applied: list[int] = []
    for migration in MIGRATIONS:
        if not must_apply(migration.version, current=version, recorded=recorded):
            continue
        migration.apply(conn)
        conn.execute(
            "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.description, to_text(utcnow())),
        )
        applied.append(migration.version)
    return applied
