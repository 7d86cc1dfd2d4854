"""Migrations 5, 6 and 8: the service-state tables, and moving the old settings rows into them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from shared.store._common import iso_week, utcnow
from shared.store.legacy import plan_legacy_moves
from shared.store.sqlite.db import dumps, to_text
from shared.store.sqlite.turns import turn_row, turns_table

STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS proposals (
    id TEXT PRIMARY KEY,
    delta TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    proposed_by TEXT NOT NULL,
    prompt_version TEXT,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    suggestion_id TEXT,
    decision_token TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS proposals_status ON proposals (status, created_at);
CREATE TABLE IF NOT EXISTS feedback (
    turn_id TEXT NOT NULL,
    user TEXT NOT NULL,
    value TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '',
    topic_ids TEXT NOT NULL DEFAULT '[]',
    answer TEXT NOT NULL DEFAULT '',
    model TEXT,
    prompt_version TEXT,
    conversation TEXT,
    surface TEXT,
    reason TEXT,
    week TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (turn_id, user)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS feedback_created ON feedback (created_at);
CREATE TABLE IF NOT EXISTS upload_messages (
    source_id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    final INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS merge_progress (
    source_id TEXT PRIMARY KEY,
    topics_added INTEGER NOT NULL DEFAULT 0,
    topics_updated INTEGER NOT NULL DEFAULT 0,
    relations_added INTEGER NOT NULL DEFAULT 0,
    relations_dropped INTEGER NOT NULL DEFAULT 0,
    changed_ids TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expires ON idempotency_keys (expires_at);
CREATE TABLE IF NOT EXISTS custom_topics (
    id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    learning_relevance TEXT NOT NULL,
    requested_as TEXT NOT NULL DEFAULT '',
    requested_by TEXT,
    prompt_version TEXT,
    offline INTEGER NOT NULL DEFAULT 0,
    suggestion_id TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS flags (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS locks (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
"""


PROVENANCE_SCHEMA = """
CREATE TABLE IF NOT EXISTS assertions (
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    source_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    version TEXT NOT NULL DEFAULT '',
    asserted_at TEXT NOT NULL,
    PRIMARY KEY (kind, subject, source_id, chunk_index)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS assertions_source ON assertions (source_id, version);
CREATE TABLE IF NOT EXISTS topic_curation (
    topic_id TEXT NOT NULL,
    field TEXT NOT NULL,
    by TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (topic_id, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS change_log (
    id TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    before TEXT NOT NULL,
    undone_at TEXT,
    undone_by TEXT
);
CREATE INDEX IF NOT EXISTS change_log_created ON change_log (created_at);
CREATE INDEX IF NOT EXISTS topics_updated ON topics (updated_at);
"""


def provenance_tables(conn: sqlite3.Connection) -> None:
    """Create the assertion, curation and change-log tables and the recent-topics index."""
    for statement in PROVENANCE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def state_tables(conn: sqlite3.Connection) -> None:
    """Create the tables of proposals, feedback, uploads, progress, keys, topics, flags, locks."""
    for statement in STATE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _column(value: Any) -> Any:
    if isinstance(value, datetime):
        return to_text(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (dict, list)):
        return dumps(value)
    return value


def _insert(conn: sqlite3.Connection, table: str, rows: Iterable[dict[str, Any]]) -> None:
    for row in rows:
        columns = ", ".join(row)
        sql = f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({', '.join('?' * len(row))})"
        conn.execute(sql, tuple(_column(v) for v in row.values()))


def _rows(models: Iterable[BaseModel], **extra: Any) -> list[dict[str, Any]]:
    return [{**m.model_dump(exclude_none=True), **extra} for m in models]


def move_settings(conn: sqlite3.Connection) -> None:
    """Move the recognised settings rows into their tables and delete them from settings."""
    settings = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM settings")}
    now = utcnow()
    moves = plan_legacy_moves(settings, now=now)
    turns_table(conn)  # the turns came later: migration 6 on an old file creates it too
    _insert(conn, "proposals", _rows(moves.proposals))
    _insert(conn, "turns", [turn_row(t.dated(now)) for t in moves.turns])
    _insert(
        conn,
        "feedback",
        [{**v.model_dump(exclude_none=True), "week": iso_week(v.created_at)} for v in moves.votes],
    )
    _insert(conn, "upload_messages", _rows(moves.uploads))
    _insert(conn, "merge_progress", _rows(moves.progress))
    _insert(conn, "locks", _rows(moves.leases))
    _insert(conn, "idempotency_keys", _rows(moves.handled))
    _insert(conn, "custom_topics", _rows(moves.custom_topics))
    _insert(conn, "flags", _rows(moves.flags))
    conn.executemany("DELETE FROM settings WHERE key = ?", [(k,) for k in moves.moved_keys])
