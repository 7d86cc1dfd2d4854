"""Migration 9 on SQLite: the record tables, the last settings rows moved in, settings dropped."""

from __future__ import annotations

import json
import sqlite3

from shared.store._common import utcnow
from shared.store.legacy_records import plan_record_moves
from shared.store.models import relation_subject
from shared.store.sqlite.db import dumps, to_text
from shared.store.sqlite.records import held_row, records_tables, ref_row
from shared.store.sqlite.undo import before_json


def move_records(conn: sqlite3.Connection) -> None:
    """Create the record tables, move the settings rows into them and drop settings."""
    records_tables(conn)
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'"
    ).fetchone()
    if not exists:
        return
    settings = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM settings")}
    now = utcnow()
    moves = plan_record_moves(settings, now=now)
    conn.executemany("INSERT OR IGNORE INTO held_changes VALUES (?, ?, ?, ?, ?)",
                     [held_row(h) for h in moves.held])  # fmt: skip
    conn.executemany(
        "INSERT OR IGNORE INTO change_log (id, actor, reason, created_at, before) "
        "VALUES (?, ?, ?, ?, ?)",
        [(b.id, b.actor, b.reason, to_text(b.created_at or now), before_json(b))
         for b in moves.batches],
    )  # fmt: skip
    topics = {r[0] for r in conn.execute("SELECT id FROM topics")}
    relations = {
        r[0] for r in conn.execute("SELECT source || '|' || target || '|' || type FROM relations")
    }
    # Provenance of what is no longer in the graph has nothing left to assert.
    kept = [a for a in moves.assertions
            if (a.topic_id in topics if a.relation is None
                else relation_subject(a.relation) in relations)]  # fmt: skip
    conn.executemany(
        "INSERT OR IGNORE INTO assertions (kind, subject, source_id, chunk_index, version, "
        "asserted_at) VALUES (?, ?, ?, ?, ?, ?)",
        [(*a.subject, a.source_id, a.chunk_index, a.version, to_text(now)) for a in kept],
    )
    conn.executemany("INSERT OR IGNORE INTO current_sources VALUES (?, ?, ?)",
                     [(n, s, to_text(now)) for n, s in moves.current.items()])  # fmt: skip
    conn.executemany(
        "INSERT OR IGNORE INTO handbook_trees VALUES (?, ?, ?, ?, ?)",
        [(t.where, t.path, t.etag, dumps(t.files), to_text(now)) for t in moves.trees],
    )
    if moves.kb_hash:
        conn.execute("INSERT OR IGNORE INTO kb_version VALUES (1, ?, ?)",
                     (moves.kb_hash, to_text(now)))  # fmt: skip
    conn.executemany("INSERT OR IGNORE INTO conversation_refs VALUES (?, ?, ?, ?, ?)",
                     [ref_row(r) for r in moves.refs])  # fmt: skip
    conn.executemany(
        "INSERT OR IGNORE INTO flags (name, value, updated_at) VALUES (?, ?, ?)",
        [(f.name, dumps(f.value), to_text(f.updated_at or now)) for f in moves.flags],
    )
    conn.execute("DROP TABLE settings")
